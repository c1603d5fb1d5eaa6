"""The Tornado daemon around the core registry."""
