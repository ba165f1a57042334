"""The ledger: one hash-chained JSON line per stop, appended whole under a lock (`chain`). Reading it back
for a person is `donegate.report`."""
