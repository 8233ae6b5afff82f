"""One module per `.wild/` file: lossless parse, render and minimal id-keyed edits."""
