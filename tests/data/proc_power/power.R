# R pROC's power.roc.test on the cases of tests/compare/test_paired_power.py; writes one_curve.csv, two_curves.csv
# and data_curves.csv.  Command (from tests/data/proc_power/): Rscript power.R   (R 4.2, pROC 1.18.0, Debian's
# r-base-core and r-cran-proc).  Every number is printed with 17 significant digits.
suppressMessages(library(pROC))
full <- function(frame, path) {  # write.csv keeps 15 digits; %.17g keeps every double exactly
  for (column in names(frame)) if (is.numeric(frame[[column]])) frame[[column]] <- sprintf("%.17g", frame[[column]])
  write.csv(frame, path, row.names = FALSE, quote = FALSE)
}
# One ROC curve (C = 1): Obuchowski's (2004) normal approximation, power at given sizes and a sample size.
one <- data.frame()
for (auc in c(0.6, 0.7, 0.75, 0.8)) for (n in list(c(20, 20), c(30, 60), c(100, 100))) for (alt in c("one.sided", "two.sided")) {
  p <- power.roc.test(auc = auc, ncases = n[1], ncontrols = n[2], sig.level = 0.05, alternative = alt)
  s <- power.roc.test(auc = auc, kappa = n[2] / n[1], sig.level = 0.05, power = 0.8, alternative = alt)
  one <- rbind(one, data.frame(auc = auc, P = n[1], N = n[2], alternative = alt, alpha = 0.05, power = p$power,
                               cases_for_80 = s$ncases))
}
full(one, "one_curve.csv")
# Two paired ROC curves from binormal parameters (A = d, B = 1; ra, rn the models' correlations).
two <- data.frame()
for (aucs in list(c(0.8, 0.7), c(0.75, 0.7), c(0.9, 0.85), c(0.65, 0.72))) for (r in c(0, 0.3, 0.6)) for (n in list(c(50, 50), c(80, 160))) for (alt in c("two.sided", "one.sided")) {
  d <- sqrt(2) * qnorm(aucs)
  pars <- list(A1 = d[1], B1 = 1, A2 = d[2], B2 = 1, rn = r, ra = r, delta = aucs[1] - aucs[2])
  p <- power.roc.test(pars, ncases = n[1], ncontrols = n[2], sig.level = 0.05, alternative = alt)
  s <- power.roc.test(pars, kappa = n[2] / n[1], sig.level = 0.05, power = 0.8, alternative = alt)
  two <- rbind(two, data.frame(auc1 = aucs[1], auc2 = aucs[2], r = r, P = n[1], N = n[2], alternative = alt,
                               alpha = 0.05, power = p$power, cases_for_80 = s$ncases))
}
full(two, "two_curves.csv")
# Two paired ROC curves from data (method = "delong"): the cases of ../proc_delong/cases.csv.
cases <- read.csv("../proc_delong/cases.csv")
dat <- data.frame()
for (k in sort(unique(cases$case))) for (alt in c("two.sided", "one.sided")) {
  s <- cases[cases$case == k, ]
  r1 <- roc(s$label, s$a, levels = c(0, 1), direction = "<", quiet = TRUE)
  r2 <- roc(s$label, s$b, levels = c(0, 1), direction = "<", quiet = TRUE)
  p <- power.roc.test(r1, r2, method = "delong", sig.level = 0.05, alternative = alt)
  n <- power.roc.test(r1, r2, method = "delong", sig.level = 0.05, power = 0.9, alternative = alt)
  dat <- rbind(dat, data.frame(case = k, alternative = alt, alpha = 0.05, power = p$power, cases_for_90 = n$ncases,
                               controls_for_90 = n$ncontrols))
}
full(dat, "data_curves.csv")
