from permitapi.cli import main

main()
