module sleeplab/probe

go 1.19
