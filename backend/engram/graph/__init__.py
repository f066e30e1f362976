"""The wiki-link graph: backlinks, neighbours, paths, centrality, communities."""
