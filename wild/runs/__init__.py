"""Research runs (SPEC §7): sweeps, run records, backends and the supervision of runs."""
