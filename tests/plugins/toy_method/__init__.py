"""A toy method, added the way a third party adds one: this package and one entry point
(`toy_method-0.1.dist-info/entry_points.txt`), no file of helper-agent touched."""
