from .cli import main
from .process_exit import finish

finish(main())
