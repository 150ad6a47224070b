"""The store synced through git: the store is a git repository, each sync commits local changes, fetches,
merges without ever writing a conflict marker, writes what came in through the product's own writes (so
history and the review queue see it) and pushes. Plain Python: the CLI and the editors call it."""
