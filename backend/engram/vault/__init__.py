"""The vault on disk: scanning, parsing, link resolution and safe writes."""
