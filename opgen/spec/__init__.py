"""opgen/spec"""
