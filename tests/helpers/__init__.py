"""Small programs the end-to-end tests run as separate processes."""
