"""User-facing tools: the `tt-hal` command line (cli), the pytest plugin
(pytest_plugin) and its closeness checks (testing), the `devices`/`info` reports
(inspection) and pictures of the chip and the submission graph (pictures)."""
