"""Classes and instances: pytrees, records, modules, receivers, where a store lands."""
