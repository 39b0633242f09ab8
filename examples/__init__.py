"""Example environments of one's own (each a seed JSONL and a reward module); see README "Reward functions"."""
