"""``python -m finkg`` runs the command line."""

from finkg.cli import main

main()
