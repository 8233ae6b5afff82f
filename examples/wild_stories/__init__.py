"""The research stories of examples/: running their sweeps directly and the scripted agent's
analysis of each (rl-training, prompt-tuning, dit-training)."""
