"""`python -m fuseforks` is the `fuseforks` command."""

from fuseforks.cli import main

main()
