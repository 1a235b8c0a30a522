# Regenerate the GOSemSim golden matrices (run from this folder):
#   Rscript make_golden.R
suppressPackageStartupMessages({library(GOSemSim); library(org.Hs.eg.db); library(GO.db)})
genes <- readLines("genes.txt")
d <- godata("org.Hs.eg.db", ont = "BP")
for (m in c("Lin", "Resnik")) {
  s <- mgeneSim(genes, semData = d, measure = m, combine = "BMA", verbose = FALSE)
  out <- cbind(gene = rownames(s), as.data.frame(s, check.names = FALSE))
  write.table(out, sprintf("mgenesim_BP_%s_BMA.tsv", tolower(m)), sep = "\t",
              quote = FALSE, row.names = FALSE, na = "NA")
}
writeLines(c(R.version.string,
             paste("GOSemSim", packageVersion("GOSemSim")),
             paste("org.Hs.eg.db", packageVersion("org.Hs.eg.db")),
             paste("GO.db", packageVersion("GO.db")),
             paste("AnnotationDbi", packageVersion("AnnotationDbi"))), "versions.txt")
