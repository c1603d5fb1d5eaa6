"""The hub and what it composes: the commit path, the flush, the deadline
timer and clock, the connections, the waiting agents, the admin's changes."""
