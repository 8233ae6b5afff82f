"""A run's metrics where its trackers wrote them: which files (`sources`), read by which
reader (`readers`, plug-ins under the `wild.metric_readers` entry points), followed as they
grow (`follow`), and each run's summary kept between commands (`kept`)."""
