"""The engine -- for embedders: the services and the harness that run pauses over the ports.

The pause service (pause, record turn, resume, expire, cancel, reconcile, drain), the run, its
events and its pause signal, the scripted harness, the one composition function that wires a
deployment, and the edge implementations of the clock and audit ports.
"""
