"""Fault tools -- for operators and implementers hardening a deployment: fuzz, crash, race.

Hostile input against the services, SIGKILL at every commit boundary, and processes racing to
decide one pause on one shared store; the testbed is the store plumbing they share.
"""
