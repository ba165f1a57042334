"""Sessions: which block counter a stop belongs to (`ids`), the counters themselves (`counters`), and the
kit's own headless runs told apart from the agent's (`kitruns`)."""
