"""Entry point for `python -m wild`."""

from wild.cli import main

if __name__ == "__main__":
    main()
