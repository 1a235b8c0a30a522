# Golden outputs of R RobustRankAggreg for tests/test_aggregate_other.py.
# Run from this folder:  Rscript make_golden.R
# For every <case>_ranks.tsv (gene x list ranks, 1 = best, ties averaged) writes
# <case>_expected.tsv: the aggregateRanks() Score of every gene for each method, with the
# normalised rank matrix rmat = ranks / nrow(ranks) (what rankMatrix() builds for full lists).
suppressPackageStartupMessages(library(RobustRankAggreg))
fmt <- function(x) sprintf("%.17g", x)
methods <- list(
  rra = list(method = "RRA", exact = FALSE),
  rra_exact = list(method = "RRA", exact = TRUE),
  mean = list(method = "mean", exact = FALSE),
  median = list(method = "median", exact = FALSE),
  geom_mean = list(method = "geom.mean", exact = FALSE),
  min = list(method = "min", exact = FALSE)
)
for (case in c("full", "ties", "eight")) {
  d <- read.delim(paste0(case, "_ranks.tsv"), check.names = FALSE, stringsAsFactors = FALSE)
  genes <- d$gene
  ranks <- as.matrix(d[, -1])
  rmat <- ranks / nrow(ranks)
  rownames(rmat) <- genes
  out <- data.frame(gene = genes, stringsAsFactors = FALSE)
  for (name in names(methods)) {
    m <- methods[[name]]
    res <- aggregateRanks(rmat = rmat, method = m$method, exact = m$exact)
    out[[name]] <- fmt(res$Score[match(genes, res$Name)])
  }
  if (!any(ranks != round(ranks))) {
    # no ties: the default call on gene lists gives the same RRA scores
    glist <- lapply(seq_len(ncol(ranks)), function(j) genes[order(ranks[, j])])
    res <- aggregateRanks(glist = glist)
    stopifnot(isTRUE(all.equal(res$Score[match(genes, res$Name)], as.numeric(out$rra))))
  }
  write.table(out, paste0(case, "_expected.tsv"), sep = "\t", quote = FALSE, row.names = FALSE)
}
cat(R.version.string, "\nRobustRankAggreg", as.character(packageVersion("RobustRankAggreg")), "\n")
