"""`wild --serve`: the live dashboard, one page over the `.wild/` files (SPEC §11)."""
