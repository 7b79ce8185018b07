"""Accounts and pages: sign in and out, and the single-page application shell."""
