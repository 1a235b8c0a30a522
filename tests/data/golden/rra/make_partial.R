# Golden outputs of R RobustRankAggreg on partial lists for tests/test_aggregate_partial.py.
# Run from this folder after `python make_partial.py`:  Rscript make_partial.R
# For every <case>_lists.tsv (list, rank, gene) writes <case>_expected.tsv with, per gene, the
# aggregateRanks() Score of
#   rra        aggregateRanks(glist, N = N, method = "RRA")
#   rra_exact  aggregateRanks(glist, N = N, method = "RRA", exact = TRUE)
#   stuart     aggregateRanks(glist, N = N, method = "stuart")
# for N = NA (the default: the number of distinct genes) and N = 1000 (suffix _n1000).
suppressPackageStartupMessages(library(RobustRankAggreg))
fmt <- function(x) sprintf("%.17g", x)
for (case in c("partial", "many")) {
  d <- read.delim(paste0(case, "_lists.tsv"), stringsAsFactors = FALSE)
  d <- d[order(d$list, d$rank), ]
  glist <- split(d$gene, factor(d$list, levels = unique(d$list)))
  genes <- unique(unlist(glist))
  out <- data.frame(gene = genes, stringsAsFactors = FALSE)
  for (N in list(NA, 1000)) {
    suffix <- if (is.na(N)) "" else paste0("_n", N)
    calls <- list(
      rra = list(method = "RRA", exact = FALSE),
      rra_exact = list(method = "RRA", exact = TRUE),
      stuart = list(method = "stuart", exact = FALSE)
    )
    for (name in names(calls)) {
      m <- calls[[name]]
      res <- aggregateRanks(glist = glist, N = N, method = m$method, exact = m$exact)
      out[[paste0(name, suffix)]] <- fmt(res$Score[match(genes, res$Name)])
    }
  }
  write.table(out, paste0(case, "_expected.tsv"), sep = "\t", quote = FALSE, row.names = FALSE)
}
cat(R.version.string, "\nRobustRankAggreg", as.character(packageVersion("RobustRankAggreg")), "\n")
