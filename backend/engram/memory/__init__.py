"""Agent memory as notes: facts, lifecycle, daily notes, context, checkpoints."""
