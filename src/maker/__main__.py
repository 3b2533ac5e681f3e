from maker.cli.main import main

main()
