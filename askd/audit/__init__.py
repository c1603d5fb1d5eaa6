"""The audit trail (protocol section 19): every question's life as records,
each hashed over RFC 8785 canonical JSON and chained to the one before.

``chain.py`` seals and checks records (no askd import: ``askd audit
verify`` runs offline); ``records.py`` says which change yields which
records; ``trail.py`` is the in-memory trail the memory store keeps.
"""
