"""opgen/targets/cpp"""
