"""Converters from external knowledge to the four internal kinds of the book's Table 6.2:
SampleCategories, SampleSimilarity, FeatureRelation, FeatureFunctions."""
