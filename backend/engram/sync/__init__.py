"""Convex sync of facts."""
