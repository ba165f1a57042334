"""The working tree a stop is judged on: which repository and seal it belongs to (`repo`), the few git
questions (`git`), one stat walk of the tree (`statcache`) and the verdict cache keyed by it
(`verdict_cache`)."""
