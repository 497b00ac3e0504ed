"""The suite -- for whoever runs conformance: checks, their framework, the runner, reports.

A check cites the clauses it exercises; the runner turns cases into a verdict per clause; the
reports render JSON Lines, a terminal table and JUnit XML from the same records.
"""
