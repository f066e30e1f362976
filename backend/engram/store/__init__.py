"""The SQLite index: the only place with SQL."""
