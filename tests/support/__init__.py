"""What the tests share besides fixtures (conftest.py keeps only those): sandboxes and settings
pointing at them, warehouse rows, an in-process sandbox transport, answers rewritten at random,
hostile files and deliveries, a small analyst world, a fleet for the report, a headless browser,
a running `shipsync up`. Import from here, never from conftest or another test module."""
