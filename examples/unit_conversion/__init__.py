"""The unit-conversion example environment: ``tasks.jsonl`` (check: custom) and ``rewards.py``."""
