"""What the tests share besides fixtures (conftest.py keeps only those): sandboxes and settings
pointing at them, an in-process sandbox transport, hostile files and deliveries, a fleet for the
report, a headless browser, a running `shipsync up`. Import from here, never from conftest."""
