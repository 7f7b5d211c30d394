"""Scenarist: test LLM agents with scenarios written in YAML."""

__version__ = "0.1.0"
