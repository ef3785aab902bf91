"""Benchmarks built on `towers.benchmarks.measure`'s measurements; not part of the core library.

`suite` measures a registered model trained every way (one device, towers, MirroredStrategy,
its input pipeline, the towers' training modes), timing the configurations it compares in
turns, and `report` turns the measurements into the benchmark's table, paired ratios, targets,
fastest mode, JSON and chart. Models reach them only as registry entries
(`models.registry.Entry`), so nothing here knows a particular model.
"""
