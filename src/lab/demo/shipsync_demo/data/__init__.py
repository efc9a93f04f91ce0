"""Example spreadsheets for `shipsync demo`, keyed to the sandbox's seeded data."""
