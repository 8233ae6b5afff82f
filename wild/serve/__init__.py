"""`wild --serve`: the live dashboard, one page over the `.wild/` files (SPEC §11)."""

# The dashboard's port unless --port names another (docs/cli.md, docs/dashboard.md).
DEFAULT_PORT = 8765
