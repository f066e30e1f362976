"""The command line: thin adapters over the facade."""
