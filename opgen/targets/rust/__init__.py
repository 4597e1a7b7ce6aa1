"""opgen/targets/rust"""
