"""`python -m fuseforks` is the `fuseforks` command."""

from fuseforks.cli.entry import main

main()
