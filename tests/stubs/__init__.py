"""Loopback stand-ins for vendor speech APIs, implementing their documented wire formats."""
