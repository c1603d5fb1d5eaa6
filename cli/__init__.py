"""askd's command line (installed as ``askd.cli``): one module per command
group, wired together in ``main``."""
