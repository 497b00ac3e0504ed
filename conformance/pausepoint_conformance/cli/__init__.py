"""The command line and the pytest plugin -- for users: ``pausepoint`` and ``--pausepoint-adapter``.

One module per subcommand (``cmd_*``), listed by :mod:`pausepoint_conformance.cli.main`.
"""
