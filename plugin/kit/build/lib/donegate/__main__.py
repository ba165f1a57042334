from donegate.cli import main

raise SystemExit(main())
