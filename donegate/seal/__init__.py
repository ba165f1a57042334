"""The sealed acceptance tests: the store outside the repository (`store`), the writer that writes them
from the request (`writer`), and the scan of a transcript for what the seal keeps secret (`leak_scan`)."""
